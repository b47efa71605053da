import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  backtraceFromStack,
  fingerprint,
  groupingIdentity,
  identityFrames,
  maskMessage,
  truncateBacktrace,
  truncateErrorClass,
  truncateMessage,
} from '../src/tracker/grouping.js';
import { errorTrackerLimits } from '../src/shared/limits.js';

// The grouping rule and the truncation limits of docs/error-grouping.md, pinned to exact values.

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const ROOT = fileURLToPath(new URL('../', import.meta.url));

describe('backtraceFromStack', () => {
  it('turns a V8 stack into project-relative frames, up to the outermost frame of src/', () => {
    const stack = [
      'TypeError: Cannot read properties of undefined',
      `    at findUser (${ROOT}src/store/users.ts:42:17)`,
      `    at Object.handler (${ROOT}node_modules/fastify/lib/route.js:10:5)`,
      `    at file://${ROOT}src/server/routes/users.ts:18:3`,
      `    at runHook (${ROOT}node_modules/fastify/lib/hooks.js:3:1)`,
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
    ].join('\n');
    assert.equal(
      backtraceFromStack(stack),
      "src/store/users.ts:42:in 'findUser'\nnode_modules/fastify/lib/route.js:10:in 'Object.handler'\nsrc/server/routes/users.ts:18:in '<anonymous>'",
    );
  });

  it('keeps every frame when none is of src/, and gives an empty backtrace for no stack', () => {
    assert.equal(backtraceFromStack('Error: x\n    at /elsewhere/a.js:1:2\n    at f (node:internal/x:3:4)'), "/elsewhere/a.js:1:in '<anonymous>'\nnode:internal/x:3:in 'f'");
    assert.equal(backtraceFromStack(undefined), '');
    assert.equal(backtraceFromStack(''), '');
  });
});

describe('the frames that enter the identity', () => {
  it('drop line and column numbers in each form of frame', () => {
    assert.deepEqual(
      identityFrames(
        [
          "src/store/users.ts:42:in 'findUser'",
          "app/models/user.rb:42:17:in 'User#find'",
          'app/models/user.rb:7:in `block in find\'',
          '    at list (/srv/app/src/routes.ts:18:3)',
          '    at /srv/app/src/main.ts:3:9',
          '  File "app/views.py", line 42, in index',
          'main.(*Server).handle(0xc000010000, {0x1, 0x2})',
          '\t/app/server.go:42 +0x1d',
          '/app/main.go:10',
          'pkg.Func(...)',
          'at com.example.Users.find(Users.java:42)',
          'anything else:12:7 on line 99',
          '',
          '   ',
        ].join('\n'),
      ),
      [
        "src/store/users.ts:in 'findUser'",
        "app/models/user.rb:in 'User#find'",
        "app/models/user.rb:in 'block in find'",
        "/srv/app/src/routes.ts:in 'list'",
        "/srv/app/src/main.ts:in '<anonymous>'",
        "app/views.py:in 'index'",
        "/app/server.go:in 'main.(*Server).handle'",
        '/app/main.go',
        "in 'pkg.Func'",
        'at com.example.Users.find(Users.java)',
        'anything else on line',
      ],
    );
  });

  it('leave out Go goroutine headers and their numbers', () => {
    const goroutine = (id: number, parent: number) =>
      `goroutine ${id} [running]:\nmain.work(0x${id.toString(16)})\n\t/app/work.go:${id} +0x1d\ncreated by main.main in goroutine ${parent}\n\t/app/main.go:${parent} +0x2f`;
    assert.deepEqual(identityFrames(goroutine(7, 1)), ["/app/work.go:in 'main.work'", "/app/main.go:in 'created by main.main'"]);
    assert.equal(fingerprint('panic', goroutine(7, 1), ''), fingerprint('panic', goroutine(31, 4), ''));
  });

  it('collapse each run of library frames (node_modules/, node:, internal/, V8 built-ins) to one <library>', () => {
    assert.deepEqual(
      identityFrames(
        [
          "node_modules/pg/lib/client.js:5:in 'query'",
          "src/store/users.ts:42:in 'findUser'",
          '    at next (/srv/cmi/node_modules/fastify/lib/hooks.js:3:1)',
          '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
          '    at async Promise.all (index 0)',
          "internal/timers.js:1:in 'listOnTimeout'",
          '    at Array.forEach (<anonymous>)',
          "src/server/routes/users.ts:18:in 'list'",
          '    at C:\\srv\\cmi\\node_modules\\fastify\\fastify.js:1:2',
        ].join('\n'),
      ),
      ['<library>', "src/store/users.ts:in 'findUser'", '<library>', "src/server/routes/users.ts:in 'list'", '<library>'],
    );
  });
});

describe('fingerprint', () => {
  it('groups the same fault at shifted line numbers', () => {
    const before = "src/store/users.ts:42:in 'findUser'\nsrc/server/routes/users.ts:18:in 'list'";
    const after = "src/store/users.ts:57:in 'findUser'\nsrc/server/routes/users.ts:21:in 'list'";
    assert.equal(groupingIdentity('TypeError', before, 'a'), "TypeError\nsrc/store/users.ts:in 'findUser'\nsrc/server/routes/users.ts:in 'list'");
    assert.equal(fingerprint('TypeError', before, 'Cannot read properties of undefined'), fingerprint('TypeError', after, 'Cannot read properties of null'));
    assert.equal(
      fingerprint('TypeError', '    at findUser (/srv/src/users.ts:42:17)', ''),
      fingerprint('TypeError', '    at findUser (/srv/src/users.ts:57:3)', ''),
    );
  });

  it('splits a different call path', () => {
    const fromList = "src/store/users.ts:42:in 'findUser'\nsrc/server/routes/users.ts:18:in 'list'";
    const fromShow = "src/store/users.ts:42:in 'findUser'\nsrc/server/routes/users.ts:18:in 'show'";
    assert.notEqual(fingerprint('TypeError', fromList, ''), fingerprint('TypeError', fromShow, ''));
    assert.notEqual(fingerprint('TypeError', fromList, ''), fingerprint('TypeError', "src/store/users.ts:42:in 'findUser'", ''));
  });

  it('groups two V8 stacks that differ only in how many framework frames sit between own frames', () => {
    const few = [
      '    at findUser (/srv/cmi/src/store/users.ts:42:17)',
      '    at handler (/srv/cmi/node_modules/fastify/lib/route.js:10:5)',
      '    at list (/srv/cmi/src/server/routes/users.ts:18:3)',
    ].join('\n');
    const many = [
      '    at findUser (/srv/cmi/src/store/users.ts:44:17)',
      '    at handler (/srv/cmi/node_modules/fastify/lib/route.js:10:5)',
      '    at next (/srv/cmi/node_modules/fastify/lib/hooks.js:3:1)',
      '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
      '    at async Promise.all (index 2)',
      '    at list (/srv/cmi/src/server/routes/users.ts:18:3)',
    ].join('\n');
    const identity = "TypeError\n/srv/cmi/src/store/users.ts:in 'findUser'\n<library>\n/srv/cmi/src/server/routes/users.ts:in 'list'";
    assert.equal(groupingIdentity('TypeError', few, ''), identity);
    assert.equal(groupingIdentity('TypeError', many, ''), identity);
    assert.equal(fingerprint('TypeError', few, ''), fingerprint('TypeError', many, ''));
  });

  it('lets the class take part: TypeError and RangeError at the same frames split', () => {
    const frames = "src/render/datetime.ts:3:in 'formatDatetime'";
    assert.notEqual(fingerprint('TypeError', frames, 'x'), fingerprint('RangeError', frames, 'x'));
    assert.equal(fingerprint('  TypeError \n', frames, 'x'), fingerprint('TypeError', frames, 'x'));
  });

  it('falls back to the masked message without frames of the application', () => {
    const a = fingerprint('Net::ReadTimeout', '', 'timeout after 3012 ms on 10.0.0.7');
    const b = fingerprint('Net::ReadTimeout', '', 'timeout after 2990 ms on 10.0.0.9');
    assert.equal(groupingIdentity('Net::ReadTimeout', '', 'timeout after 3012 ms on 10.0.0.7'), 'Net::ReadTimeout\ntimeout after <n> ms on <ip>');
    assert.equal(a, b);
    // Library frames only: still the message, and the library frames do not count.
    const library = "node_modules/pg/lib/client.js:5:in 'query'\nnode:net:1:in 'connect'";
    assert.equal(groupingIdentity('Net::ReadTimeout', library, 'timeout after 2990 ms on 10.0.0.9'), 'Net::ReadTimeout\ntimeout after <n> ms on <ip>');
    assert.equal(fingerprint('Net::ReadTimeout', library, 'timeout after 2990 ms on 10.0.0.9'), a);
    // Another wording is another error.
    assert.notEqual(fingerprint('Net::ReadTimeout', '', 'timeout after 3012 ms on db-1'), fingerprint('Net::ReadTimeout', '', 'timed out after 3012 ms on db-1'));
    assert.equal(fingerprint('Net::ReadTimeout', '', 'timeout after 3012 ms on db-1'), fingerprint('Net::ReadTimeout', '', 'timeout after 17 ms on db-2'));
    // With a frame of its own, the message plays no part.
    const own = "src/store/users.ts:42:in 'findUser'";
    assert.equal(fingerprint('E', own, 'one'), fingerprint('E', own, 'two'));
  });

  it('is the SHA-256 of the documented identity string', () => {
    const backtrace = [
      "src/store/users.ts:42:in 'findUser'",
      "node_modules/fastify/lib/route.js:10:in 'handler'",
      "node:internal/process/task_queues:95:in 'processTicksAndRejections'",
      "src/server/routes/users.ts:18:in 'list'",
    ].join('\n');
    const identity = "TypeError\nsrc/store/users.ts:in 'findUser'\n<library>\nsrc/server/routes/users.ts:in 'list'";
    assert.equal(sha256(identity), '614efb54a3522a3b2d29473b0286a319c1fd52aee113f69bcaaaa28b3725735c');
    assert.equal(fingerprint('TypeError', backtrace, 'Cannot read properties of undefined'), '614efb54a3522a3b2d29473b0286a319c1fd52aee113f69bcaaaa28b3725735c');
    // The second stack of the worked example: other lines, another framework frame.
    const shifted = "src/store/users.ts:57:in 'findUser'\nnode_modules/fastify/lib/hooks.js:3:in 'next'\nsrc/server/routes/users.ts:21:in 'list'";
    assert.equal(groupingIdentity('TypeError', shifted, 'Cannot read properties of null'), identity);
    assert.equal(fingerprint('TypeError', shifted, 'Cannot read properties of null'), '614efb54a3522a3b2d29473b0286a319c1fd52aee113f69bcaaaa28b3725735c');
    assert.equal(sha256('Net::ReadTimeout\ntimeout after <n> ms on <ip>'), 'd1b08cb9d1d83a0b5be85e4015bdb9e5c19774977ba4334a59e896b8b9884dee');
    assert.equal(fingerprint('Net::ReadTimeout', '', ' timeout after 3012 ms on 10.0.0.7 '), 'd1b08cb9d1d83a0b5be85e4015bdb9e5c19774977ba4334a59e896b8b9884dee');
  });

  it('keeps the fingerprints of the earlier rule where it has nothing to collapse or mask (docs/api.md)', () => {
    const backtrace = "src/store/users.ts:42:in 'findUser'\nsrc/server/routes/users.ts:18:in 'list'";
    assert.equal(fingerprint('TypeError', backtrace, ''), 'eea7e6285fc40399a1e670bd5a91de9c3b5ec89404407283f3be29d18c6fe7cd');
    assert.equal(fingerprint('Net::ReadTimeout', '', 'read timeout & retry'), '6c6f18f54517507a060163ad52bf2b1f25f078639f1a10834dda4188a40a7734');
  });

  it('is the same before and after truncation, and is 64 lowercase hex', () => {
    const frames = Array.from({ length: 300 }, (_, i) => `src/deep.ts:${i}:in 'recurse'`);
    const longClass = ` ${'E'.repeat(300)} `;
    const longMessage = 'x'.repeat(70_000);
    const raw = fingerprint(longClass, frames.join('\n'), longMessage);
    assert.match(raw, /^[0-9a-f]{64}$/);
    assert.equal(fingerprint(truncateErrorClass(longClass), truncateBacktrace(frames.join('\n')), truncateMessage(longMessage)), raw);
    // Deeper recursion (another number of omitted frames) is the same fault.
    const deeper = Array.from({ length: 400 }, (_, i) => `src/deep.ts:${i}:in 'recurse'`);
    assert.equal(fingerprint(longClass, deeper.join('\n'), ''), raw);
  });
});

describe('maskMessage', () => {
  it('masks the example of docs/error-grouping.md to one string', () => {
    assert.equal(maskMessage('timeout after 3012 ms on 10.0.0.7'), 'timeout after <n> ms on <ip>');
    assert.equal(maskMessage('timeout after 2990 ms on 10.0.0.9'), 'timeout after <n> ms on <ip>');
  });

  it('masks UUIDs, IP addresses, hex and numbers, in that order, and trims', () => {
    assert.equal(maskMessage('user 123e4567-E89B-12d3-a456-426614174000 not found'), 'user <uuid> not found');
    assert.equal(maskMessage('connect to 10.0.0.7:5432 refused'), 'connect to <ip> refused');
    assert.equal(maskMessage('from 2001:db8::ff00:42:8329 and ::1.'), 'from <ip> and <ip>.');
    assert.equal(maskMessage('full 2001:0db8:0000:0000:0000:ff00:0042:8329, [fe80::1%eth0]:8080, ::ffff:10.0.0.1'), 'full <ip>, [<ip>]:<n>, <ip>');
    assert.equal(maskMessage('pointer 0x7ffd5fbff8a0, object 0xA, commit 3f2a9c1b7e0d, 12345678'), 'pointer <hex>, object <hex>, commit <hex>, <hex>');
    assert.equal(maskMessage('took 3.25 s for 12 rows, -7 left in v2'), 'took <n> s for <n> rows, -<n> left in v<n>');
    assert.equal(maskMessage('  deadbeef facade Net::ReadTimeout Abc::Def at 12:34:56  '), 'deadbeef facade Net::ReadTimeout Abc::Def at <n>:<n>:<n>');
  });
});

describe('truncation', () => {
  const { messageChars, frameChars, errorClassChars } = errorTrackerLimits;

  it('leaves a message of exactly the limit alone', () => {
    const message = 'm'.repeat(messageChars);
    assert.equal(truncateMessage(message), message);
  });

  it('cuts a longer message and says how much was cut, within the limit', () => {
    const truncated = truncateMessage('m'.repeat(messageChars + 1));
    // The marker is 34 characters, so 34 + 1 are cut off.
    assert.equal(truncated, 'm'.repeat(65_502) + '\n… [truncated: 35 more characters]');
    assert.equal(truncated.length, messageChars);
    // A message far longer: a marker with a longer number still fits.
    const far = truncateMessage('m'.repeat(10_000_000));
    assert.ok(far.length <= messageChars);
    const cutOff = Number(/\[truncated: (\d+) more characters\]$/.exec(far)?.[1]);
    assert.equal(far.indexOf('\n'), 10_000_000 - cutOff);
  });

  it('never cuts a surrogate pair in half', () => {
    // The cut would fall after the first of the pair's two code units: the pair goes whole, and the count says so.
    const message = 'm'.repeat(65_501) + '😀' + 'm'.repeat(34);
    assert.equal(message.length, messageChars + 1);
    assert.equal(truncateMessage(message), 'm'.repeat(65_501) + '\n… [truncated: 36 more characters]');
    assert.equal(truncateErrorClass('E'.repeat(errorClassChars - 1) + '😀'), 'E'.repeat(errorClassChars - 1));
    assert.equal(truncateBacktrace('f'.repeat(frameChars - 1) + '😀'), 'f'.repeat(frameChars - 1));
  });

  it('leaves 256 frames alone and keeps 200 + 50 of 257', () => {
    const frames = (count: number) => Array.from({ length: count }, (_, i) => `frame ${i}`);
    assert.equal(truncateBacktrace(frames(256).join('\n')), frames(256).join('\n'));
    const kept = truncateBacktrace(frames(257).join('\n')).split('\n');
    assert.equal(kept.length, 251);
    assert.deepEqual(kept.slice(0, 200), frames(200));
    assert.equal(kept[200], '… [7 frames omitted]');
    assert.deepEqual(kept.slice(201), frames(257).slice(207));
    assert.equal(truncateBacktrace(frames(1000).join('\n')).split('\n')[200], '… [750 frames omitted]');
  });

  it('cuts a frame to 1,024 characters and an error class to 255, trimmed', () => {
    assert.equal(truncateBacktrace(`${'a'.repeat(frameChars)}\n${'b'.repeat(frameChars + 5)}`), `${'a'.repeat(frameChars)}\n${'b'.repeat(frameChars)}`);
    assert.equal(truncateErrorClass(`  ${'E'.repeat(errorClassChars + 10)}  `), 'E'.repeat(errorClassChars));
    assert.equal(truncateErrorClass(' TypeError\n'), 'TypeError');
    assert.equal(truncateBacktrace(''), '');
  });
});
