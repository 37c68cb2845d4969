// Issue 33's two clouds on Ceph's radosgw, a real S3 implementation, where scale-out-clouds.test.ts runs
// them on the fake s3rver: one PostgreSQL, a one-node Ceph cluster started once for this file (about
// 15 s; cloud/testing/radosgw.ts) and two platform-cloud processes, from the same fixture
// (cloud/testing/two-clouds.ts). Only the tests whose outcome S3 decides run here, to keep CI short:
// an upload through A (readings, a capture, a multipart file) read through B, and kill -9 of A during
// uploads, after which every acknowledged upload is whole through B and the sweep removes exactly the
// unnamed objects, which on radosgw include the unfinished multipart uploads the kill left (s3rver
// cannot list those). Without the Debian packages radosgw, ceph-mon and ceph-osd the hook fails,
// naming them: these tests never pass without the service.
import test from 'ava';
import { testKillADuringUploads, testUploadThroughA, twoClouds } from '../testing/two-clouds.js';

const world = twoClouds(test, { s3: 'radosgw' });

testUploadThroughA(test, world, ' (radosgw)');
// Last: it leaves A dead.
testKillADuringUploads(test, world, ' (radosgw)');
