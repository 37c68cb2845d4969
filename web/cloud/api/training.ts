// platform.app.mltraining.v1.MLTrainingService: the calls of the training view.
import * as ml from '../../../gen/platform/app/mltraining/v1/ml_training.js';
import { method } from './client.js';

export const ML_TRAINING = 'platform.app.mltraining.v1.MLTrainingService';
export const trainingApi = {
  submit: method(ML_TRAINING, 'SubmitTrainingJob', ml.SubmitTrainingJobRequest, ml.SubmitTrainingJobResponse),
  submitCustom: method(ML_TRAINING, 'SubmitCustomTrainingJob', ml.SubmitCustomTrainingJobRequest, ml.SubmitCustomTrainingJobResponse),
  scripts: method(ML_TRAINING, 'ListTrainingScripts', ml.ListTrainingScriptsRequest, ml.ListTrainingScriptsResponse),
  get: method(ML_TRAINING, 'GetTrainingJob', ml.GetTrainingJobRequest, ml.GetTrainingJobResponse),
  list: method(ML_TRAINING, 'ListTrainingJobs', ml.ListTrainingJobsRequest, ml.ListTrainingJobsResponse),
  cancel: method(ML_TRAINING, 'CancelTrainingJob', ml.CancelTrainingJobRequest, ml.CancelTrainingJobResponse),
  logs: method(ML_TRAINING, 'GetTrainingJobLogs', ml.GetTrainingJobLogsRequest, ml.GetTrainingJobLogsResponse),
  artefacts: method(ML_TRAINING, 'ListModelArtefacts', ml.ListModelArtefactsRequest, ml.ListModelArtefactsResponse),
  /** Server-streaming: call it with serverStream (stream.ts). */
  download: method(ML_TRAINING, 'DownloadModelArtefact', ml.DownloadModelArtefactRequest, ml.DownloadModelArtefactResponse),
};
