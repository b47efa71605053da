// `node --import ./tools/shared/compiled-modules.mjs`: the test files' processes load the project's
// TypeScript from the copy CMI_TEST_SUITE_JS names (tools/shared/compiled-modules-hooks.mjs), with
// source maps on so a backtrace names the .ts lines; tools/run-tests.ts sets it.
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';

const copy = process.env.CMI_TEST_SUITE_JS;
if (copy === undefined || copy === '') throw new Error('compiled-modules.mjs: CMI_TEST_SUITE_JS names no compiled copy (tools/run-tests.ts sets it)');
process.setSourceMapsEnabled(true);
register('./compiled-modules-hooks.mjs', import.meta.url, { data: { root: fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, ''), copy } });
