/**
 * The operator CLI (the spec's "dashboard"):
 *   accounts create --email E --password P [--name N] [--totp] [--json]
 *   tokens create --account ACCT [--sandbox NAME] [--json]
 *   tokens revoke --token TOKEN
 *   transactions canonical-hashes [--apply] [--json]
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../config';
import { connectDatabase, disconnectDatabase } from '../db/connection';
import { ApiError } from '../lib/errors';
import { createAccount, createTokenFor, revokeToken } from '../services/accounts/accounts';
import { auditTransactionHashes, TransactionHashAudit } from '../services/crypto/transactionHashAudit';

const USAGE = `usage:
  cli accounts create --email E --password P [--name N] [--totp] [--json]
  cli tokens create --account ACCT_ID [--sandbox NAME] [--json]
  cli tokens revoke --token TOKEN
  cli transactions canonical-hashes [--apply] [--json]`;

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

function print(json: boolean, value: Record<string, unknown>) {
  if (json) console.log(JSON.stringify(value));
  else for (const [k, v] of Object.entries(value)) console.log(`${k.padEnd(14)} ${v}`);
}

function printHashAudit(a: TransactionHashAudit, applied: boolean) {
  for (const d of a.duplicates) console.log(`duplicate  ${d.currency} ${d.canonical} to ${d.address_key} (${d.scope}): ${d.ids.join(', ')}`);
  for (const i of a.invalid) console.log(`invalid    ${i.id} ${JSON.stringify(i.transaction_id)}: ${i.reason}`);
  for (const r of a.rewrite) console.log(`${a.rewritten.includes(r.id) ? 'rewritten ' : a.busy.includes(r.id) ? 'busy      ' : 'to rewrite'} ${r.id} ${r.from} -> ${r.canonical}`);
  for (const c of a.claims) console.log(`${applied ? 'rewritten ' : 'to rewrite'} ${c.id} (pending claim) ${c.from} -> ${c.canonical}`);
  console.log(`${a.duplicates.length} duplicated payments, ${a.invalid.length} invalid hashes, ${a.rewrite.length} transactions and ${a.claims.length} pending claims in another spelling; ${applied ? `${a.rewritten.length} rewritten` : 'nothing changed (--apply rewrites those without a twin)'}`);
}

/** What each command needs: checked, like the options, before the database is asked anything. */
const REQUIRED: Record<string, readonly ('email' | 'password' | 'account' | 'token')[]> = {
  'accounts create': ['email', 'password'],
  'tokens create': ['account'],
  'tokens revoke': ['token'],
  'transactions canonical-hashes': [],
};

function parseOptions(args: string[]) {
  return parseArgs({
    args,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      name: { type: 'string' },
      totp: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      account: { type: 'string' },
      sandbox: { type: 'string' },
      token: { type: 'string' },
      apply: { type: 'boolean', default: false },
    },
    strict: true,
  });
}

async function main(argv: string[]) {
  const [group, action, ...rest] = argv;
  let values: ReturnType<typeof parseOptions>['values'];
  try {
    ({ values } = parseOptions(rest));
  } catch (err) {
    // An unknown option, or one without its value: a usage error (exit 2), like a missing one.
    fail(`${(err as Error).message}\n${USAGE}`);
  }
  const required = Object.hasOwn(REQUIRED, `${group} ${action}`) ? REQUIRED[`${group} ${action}`] : null;
  if (!required || required.some((name) => !values[name])) fail(USAGE);
  const config = loadConfig();
  await connectDatabase(config.mongodbUri, { unavailableTimeoutMs: config.dbUnavailableTimeoutMs });
  try {
    if (group === 'accounts' && action === 'create') {
      if (!values.email || !values.password) fail(USAGE);
      print(values.json!, await createAccount({ email: values.email, password: values.password, name: values.name, totp: values.totp }));
    } else if (group === 'tokens' && action === 'create') {
      if (!values.account) fail(USAGE);
      const sandbox = values.sandbox ?? null;
      print(values.json!, { account_id: values.account, sandbox, token: await createTokenFor(values.account, sandbox) });
    } else if (group === 'tokens' && action === 'revoke') {
      if (!values.token) fail(USAGE);
      const revoked = await revokeToken(values.token);
      if (!revoked) fail('no such active token');
      print(values.json!, { revoked: true });
    } else if (group === 'transactions' && action === 'canonical-hashes') {
      const audit = await auditTransactionHashes({ apply: values.apply! });
      if (values.json) console.log(JSON.stringify(audit));
      else printHashAudit(audit, values.apply!);
    } else {
      fail(USAGE);
    }
  } finally {
    await disconnectDatabase();
  }
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ApiError) fail(`error: ${err.message}`);
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
