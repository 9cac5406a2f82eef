/** A NUL character in a query or body is a 422 before it reaches the database (PostgreSQL cannot hold one). */
import { useTestDatabase } from '../support/db';
import { newAccount, startTestApi, TestApi } from '../support/api';
import { nulPath } from '../../src/api/validation';

useTestDatabase();
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api.close());

describe('NUL characters', () => {
  it('finds the first string holding one', () => {
    expect(nulPath({ a: 'x', b: ['y', 'z\u0000'] })).toBe('/b/1');
    expect(nulPath({ a: 'x' })).toBeNull();
  });

  it('answers 422 parameter_invalid on a query filter and in a body, never 500', async () => {
    const a = await newAccount(api.url);
    const list = await a.api.get('/v1/invoices?customer_id=_%5B%00%C2%8E');
    expect([list.status, list.body.error.code, list.body.error.param]).toEqual([422, 'parameter_invalid', 'customer_id']);
    const hook = await a.api.post('/v1/webhook_endpoints', { url: 'https://example.com/\u0000', subscriptions: ['\u0000}'] }, { 'Idempotency-Key': 'nul-1' });
    expect([hook.status, hook.body.error.code]).toEqual([422, 'parameter_invalid']);
    const customer = await a.api.post('/v1/customers', { email: 'nul\u0000@x.io' });
    expect([customer.status, customer.body.error.param]).toEqual([422, 'email']);
  });
});
