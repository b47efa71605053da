import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeDocument, sectionsOf } from '../tools/bench/document.js';

// docs/benchmarks.md is written whole by `npm run bench`; `--only` replaces some sections and keeps the others.
describe('the benchmarks document', () => {
  it('puts the introduction first, then the sections in their fixed order between markers', () => {
    const doc = composeDocument('# Benchmarks\n\nIntro.\n', new Map([['errors', '## Errors\n'], ['throughput', '\n## Throughput\n\n| a |\n']]));
    assert.equal(doc, '# Benchmarks\n\nIntro.\n\n<!-- throughput -->\n## Throughput\n\n| a |\n<!-- /throughput -->\n\n<!-- errors -->\n## Errors\n<!-- /errors -->\n');
  });

  it('reads back the sections a document holds, so a partial run keeps the others', () => {
    const doc = composeDocument('# Benchmarks', new Map([['scale', '## Size\n\nold'], ['auth', '## Auth']]));
    const sections = sectionsOf(doc);
    assert.deepEqual([...sections], [['scale', '## Size\n\nold'], ['auth', '## Auth']]);
    sections.set('scale', '## Size\n\nnew');
    assert.equal(composeDocument('# Benchmarks', sections), '# Benchmarks\n\n<!-- scale -->\n## Size\n\nnew\n<!-- /scale -->\n\n<!-- auth -->\n## Auth\n<!-- /auth -->\n');
  });

  it('keeps a section measured by hand (metrics-cost) after the suite\'s own, as it was', () => {
    const sections = sectionsOf(composeDocument('# Benchmarks', new Map([['metrics-cost', '## Metrics cost\n\n3 µs'], ['auth', '## Auth']])));
    sections.set('auth', '## Auth, new');
    assert.equal(composeDocument('# Benchmarks', sections), '# Benchmarks\n\n<!-- auth -->\n## Auth, new\n<!-- /auth -->\n\n<!-- metrics-cost -->\n## Metrics cost\n\n3 µs\n<!-- /metrics-cost -->\n');
  });
});
