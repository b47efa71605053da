import type { TextFunctions } from './text.js';

/** PostgreSQL's lower() folds every letter the database's encoding and collation know. */
export const postgresText: TextFunctions = { lowerFunction: 'lower' };
