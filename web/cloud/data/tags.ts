// Dataset membership is also recorded as the tag PLATFORM_DATASET_<id> (SPEC "Data records"); the page
// shows it as the dataset's name, not as a tag one could remove by hand.
export const DATASET_TAG_PREFIX = 'PLATFORM_DATASET_';

export const userTags = (tags: readonly string[]): string[] => tags.filter((t) => !t.startsWith(DATASET_TAG_PREFIX));

/** The tags typed for an upload: comma separated, trimmed, empty ones and repeats dropped. */
export const parseTags = (text: string): string[] => [...new Set(text.split(',').map((t) => t.trim()))].filter((t) => t !== '');
