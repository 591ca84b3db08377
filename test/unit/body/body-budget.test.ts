import { describe, expect, it } from 'vitest';
import { BodyBudget } from '../../../src/body/body-budget.js';

describe('BodyBudget', () => {
  it('takes bytes up to the bound over all bodies, and gives them back', () => {
    const budget = new BodyBudget(100);
    expect(budget.take(60, 0)).toBe(true);
    expect(budget.take(40, 0)).toBe(true);
    expect(budget.bytes).toBe(100);
    expect(budget.take(1, 40)).toBe(false);
    expect(budget.bytes).toBe(100);
    budget.give(60);
    expect(budget.take(50, 40)).toBe(true);
    expect(budget.bytes).toBe(90);
  });

  it('lets one body past the bound while it is the only one, and no other beside it', () => {
    const budget = new BodyBudget(100);
    expect(budget.take(80, 0)).toBe(true);
    expect(budget.take(80, 80)).toBe(true);
    expect(budget.bytes).toBe(160);
    expect(budget.take(1, 0)).toBe(false);
    expect(budget.take(10, 160)).toBe(true);
  });
});
