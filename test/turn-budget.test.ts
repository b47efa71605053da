import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nextTurn, TurnBudget } from '../src/shared/turn-budget.js';

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('TurnBudget', () => {
  it('says a turn is spent once its milliseconds have passed (checked every N items), until the next turn', async () => {
    const budget = new TurnBudget(2, 4);
    assert.deepEqual([budget.spend(), budget.spend(), budget.spend(), budget.spend()], [false, false, false, false], 'under 2 ms');
    busy(2.5);
    assert.deepEqual([budget.spend(), budget.spend(), budget.spend()], [false, false, false], 'not checked before the 8th item');
    assert.equal(budget.spend(), true, 'the 8th item finds 2 ms gone');
    assert.equal(budget.spent, true);
    assert.equal(budget.spend(), true, 'and stays spent');
    await nextTurn();
    assert.equal(budget.spent, false, 'a new turn');
    assert.equal(budget.spend(), false);
  });
});
