/** @jsxImportSource preact */
/**
 * The human reference, rendered on the server from the OpenAPI document (no script at all):
 * `/docs` lists every operation with its parameters, body and responses, then every schema;
 * `/docs/errors` has one anchor per error code, which every error's `doc_url` points at.
 */
import { createHash } from 'node:crypto';
import { ERROR_CODES, ErrorCode } from '../../lib/errorCodes';
import type { ComponentChildren } from 'preact';
import { InlineStyle, renderDocument } from '../../lib/html';

type Json = Record<string, any>;

export const STYLE = `
body { font-family: system-ui, sans-serif; line-height: 1.45; color: #1d1d1f; margin: 0; }
header, main, footer { max-width: 60rem; margin: 0 auto; padding: 0 1rem; }
header { border-bottom: 1px solid #ddd; padding-bottom: .5rem; }
nav ul { columns: 2; padding-left: 1.2rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.3rem; margin-top: 2.5rem; border-bottom: 1px solid #eee; }
h3 { font-size: 1.05rem; margin-top: 1.8rem; } h4 { font-size: .95rem; margin: 1rem 0 .3rem; }
code { font-family: ui-monospace, monospace; font-size: .9em; background: #f4f4f6; padding: 0 .2em; border-radius: 3px; }
table { border-collapse: collapse; width: 100%; margin: .4rem 0 1rem; font-size: .92rem; }
th, td { border: 1px solid #ddd; padding: .3rem .5rem; text-align: left; vertical-align: top; }
th { background: #f7f7f9; }
.op { border: 1px solid #e3e3e8; border-radius: 6px; padding: .2rem 1rem .6rem; margin: 1rem 0; }
.method { display: inline-block; min-width: 4.2rem; font-weight: 700; font-family: ui-monospace, monospace; }
.get { color: #0a6; } .post { color: #06c; } .patch, .put { color: #a60; } .delete { color: #c22; }
.muted { color: #666; font-size: .9rem; }
section.code { border-left: 3px solid #06c; padding: .1rem 0 .1rem 1rem; margin: 1.2rem 0; }
section.code:target { background: #fff8d6; }
`;

/** The CSP allows exactly this stylesheet (by hash) and nothing else: no script, no frame, no form. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Text where `code` spans become <code> elements. */
function Text({ s }: { s: string | undefined }) {
  if (!s) return null;
  return <>{s.split(/`([^`]+)`/).map((part, i) => (i % 2 ? <code>{part}</code> : part))}</>;
}

function page(title: string, body: ComponentChildren): string {
  return renderDocument(
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{title}</title>
        <InlineStyle css={STYLE} />
      </head>
      <body>{body}</body>
    </html>,
  );
}

const refName = (ref: string) => ref.split('/').pop()!;
const schemaAnchor = (name: string) => `schema-${name}`;

/** Items with a separator between them. */
function joined(items: ComponentChildren[], sep: string): ComponentChildren {
  return items.map((item, i) => (i ? <>{sep}{item}</> : item));
}

/** A one-line description of a schema: type, enum, format, bounds, default. */
export function describeSchema(schema: Json | undefined): ComponentChildren {
  if (!schema || Object.keys(schema).length === 0) return 'any';
  if (schema.$ref) {
    const name = refName(schema.$ref);
    return <a href={`#${schemaAnchor(name)}`}>{name}</a>;
  }
  if ('const' in schema) return <code>{JSON.stringify(schema.const)}</code>;
  for (const k of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[k])) return joined(schema[k].map((s: Json) => describeSchema(s)), ' or ');
  }
  if (schema.not && Object.keys(schema.not).length === 0) return 'not accepted here';
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const out: ComponentChildren = types.length
    ? joined(
        types.map((t) => {
          if (t === 'array') return <>array of {describeSchema(schema.items)}</>;
          if (t === 'object' && schema.properties) return 'object (below)';
          return t;
        }),
        ' or ',
      )
    : 'any';
  const notes: ComponentChildren[] = [];
  if (Array.isArray(schema.enum)) notes.push(<>one of {joined(schema.enum.map((v: unknown) => <code>{JSON.stringify(v)}</code>), ', ')}</>);
  if (schema.format) notes.push(`format ${schema.format}`);
  if (schema.pattern) notes.push(<>pattern <code>{schema.pattern}</code></>);
  if (schema.minLength !== undefined) notes.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) notes.push(`at most ${schema.maxLength} characters`);
  if (schema.minimum !== undefined) notes.push(`minimum ${schema.minimum}`);
  if (schema.maximum !== undefined) notes.push(`maximum ${schema.maximum}`);
  if (schema.minItems !== undefined) notes.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) notes.push(`at most ${schema.maxItems} items`);
  if (schema.default !== undefined) notes.push(<>default <code>{JSON.stringify(schema.default)}</code></>);
  return notes.length ? <>{out}; {joined(notes, '; ')}</> : out;
}

/** Rows of a property table, nested objects and arrays of objects flattened as `a[][b]`. */
function propertyRows(schema: Json, prefix = ''): ComponentChildren[] {
  const props: Record<string, Json> = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const rows: ComponentChildren[] = [];
  for (const [name, prop] of Object.entries(props)) {
    const full = prefix ? `${prefix}[${name}]` : name;
    rows.push(
      <tr><td><code>{full}</code></td><td>{describeSchema(prop)}</td><td>{required.includes(name) ? 'yes' : ''}</td><td><Text s={prop.description} /></td></tr>,
    );
    if (prop.properties) rows.push(...propertyRows(prop, full));
    if (prop.items?.properties) rows.push(...propertyRows(prop.items, `${full}[]`));
  }
  return rows;
}

function PropertyTable({ schema }: { schema: Json }) {
  const rows = propertyRows(schema);
  if (rows.length === 0) return <p>{describeSchema(schema)}</p>;
  return (
    <table>
      <thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Notes</th></tr></thead>
      <tbody>{rows}</tbody>
    </table>
  );
}

function resolve(doc: Json, obj: Json): Json {
  if (obj?.$ref) {
    const [, , kind, name] = obj.$ref.split('/');
    return doc.components[kind][name];
  }
  return obj;
}

function Operation({ doc, path, method, op }: { doc: Json; path: string; method: string; op: Json }) {
  const params: Json[] = (op.parameters ?? []).map((p: Json) => resolve(doc, p));
  return (
    <div class="op" id={`op-${op.operationId}`}>
      <h4><span class={`method ${method}`}>{method.toUpperCase()}</span> <code>{`/v1${path}`}</code></h4>
      <p><Text s={op.summary} />{op.description ? <>. <Text s={op.description} /></> : null}</p>
      <p class="muted">
        {Array.isArray(op.security) && op.security.length === 0 ? 'No token needed.' : 'Needs a token.'} Operation id <code>{op.operationId}</code>.
      </p>
      {params.length ? (
        <table>
          <thead><tr><th>Parameter</th><th>In</th><th>Type</th><th>Required</th><th>Notes</th></tr></thead>
          <tbody>
            {params.map((p) => (
              <tr><td><code>{p.name}</code></td><td>{p.in}</td><td>{describeSchema(p.schema)}</td><td>{p.required ? 'yes' : ''}</td><td><Text s={p.description} /></td></tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {op.requestBody ? (
        <>
          <p><strong>Body</strong> (JSON{op.requestBody.required ? '' : ', optional'}):</p>
          <PropertyTable schema={op.requestBody.content['application/json'].schema} />
        </>
      ) : null}
      <table>
        <thead><tr><th>Status</th><th>Answer</th></tr></thead>
        <tbody>
          {Object.entries(op.responses as Record<string, Json>).map(([status, raw]) => {
            const r = resolve(doc, raw);
            const schema = r.content?.['application/json']?.schema;
            const shape = schema ? (schema.properties ? describeList(schema) : describeSchema(schema)) : 'no body';
            return <tr><td>{status}</td><td><Text s={r.description} />: {shape}</td></tr>;
          })}
        </tbody>
      </table>
    </div>
  );
}

/** `{customers: [Customer], pagination}` for list answers. */
function describeList(schema: Json): ComponentChildren {
  return (
    <>
      <code>{'{'}</code>
      {joined(Object.entries(schema.properties as Record<string, Json>).map(([k, v]) => <><code>{k}</code>: {describeSchema(v)}</>), ', ')}
      <code>{'}'}</code>
    </>
  );
}

export function renderReference(doc: Json): string {
  const byTag = new Map<string, ComponentChildren[]>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) {
      const tag = op.tags?.[0] ?? 'Other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(<Operation doc={doc} path={path} method={method} op={op} />);
    }
  }
  const tags: Json[] = doc.tags ?? [];
  const schemas = doc.components.schemas as Record<string, Json>;
  const body = (
    <>
      <header>
        <h1>{doc.info.title} <small class="muted">v{doc.info.version}</small></h1>
        <p><Text s={doc.info.description} /></p>
        <p>Machine-readable: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1). Errors: <a href="/docs/errors">/docs/errors</a>.</p>
        <h2>Authentication</h2>
        {Object.entries(doc.components.securitySchemes as Record<string, Json>).map(([name, s]) => <p><strong>{name}</strong>: <Text s={s.description} /></p>)}
        <nav>
          <h2>Contents</h2>
          <ul>
            {tags.map((t) => <li><a href={`#tag-${slug(t.name)}`}>{t.name}</a></li>)}
            <li><a href="#schemas">Schemas</a></li>
          </ul>
        </nav>
      </header>
      <main>
        {tags.map((t) => (
          <>
            <h2 id={`tag-${slug(t.name)}`}>{t.name}</h2>
            <p><Text s={t.description} /></p>
            {byTag.get(t.name) ?? []}
          </>
        ))}
        <h2 id="schemas">Schemas</h2>
        {Object.entries(schemas).map(([name, s]) => (
          <>
            <h3 id={schemaAnchor(name)}>{name}</h3>
            {s.description ? <p><Text s={s.description} /></p> : null}
            <PropertyTable schema={s} />
          </>
        ))}
      </main>
    </>
  );
  return page(`${doc.info.title}: reference`, body);
}

function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

const ERROR_BODY = `{"error": {"type": "invalid_request_error", "code": "parameter_invalid", "message": "Email is invalid",
           "param": "email", "timestamp": "2026-11-22T16:00:00.000Z",
           "doc_url": "<PUBLIC_URL>/docs/errors#parameter_invalid"},
 "errors": {"email": ["is invalid"]}}`;

export function renderErrors(): string {
  const codes = Object.entries(ERROR_CODES) as [ErrorCode, (typeof ERROR_CODES)[ErrorCode]][];
  const body = (
    <>
      <header>
        <h1>Errors</h1>
        <p>Every error but those of <code>POST /v1/auth</code> has one body:</p>
        <pre><code>{ERROR_BODY}</code></pre>
        <p>
          <code>code</code> is stable: programs branch on it. <code>message</code> is for people and may change. <code>param</code> names the offending parameter (nested ones
          like <code>line_items[][price_id]</code>) or is null. Validation failures of a model also carry <code>errors</code>, the field-errors map.{' '}
          <code>POST /v1/auth</code> answers its own failures as <code>{'{"error": "<message>"}'}</code> (401 wrong credentials, 422 <code>otp_attempt_required</code>).
        </p>
        <p>
          Types: <code>invalid_request_error</code> (fix the request), <code>authentication_error</code> (fix the token), <code>address_error</code> (fix the address),{' '}
          <code>api_error</code> (our side or a dependency: retry).
        </p>
        <nav>
          <ul>{codes.map(([code]) => <li><a href={`#${code}`}><code>{code}</code></a></li>)}</ul>
        </nav>
        <p><a href="/docs">API reference</a></p>
      </header>
      <main>
        {codes.map(([code, info]) => (
          <section class="code" id={code}>
            <h2><code>{code}</code></h2>
            <p class="muted">HTTP {info.statuses.join(', ')} · type <code>{info.type}</code></p>
            <p><Text s={info.description} /></p>
          </section>
        ))}
      </main>
    </>
  );
  return page('Errors: API reference', body);
}
