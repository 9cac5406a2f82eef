/**
 * The human reference, rendered on the server from the OpenAPI document (no script at all):
 * `/docs` lists every operation with its parameters, body and responses, then every schema;
 * `/docs/errors` has one anchor per error code, which every error's `doc_url` points at.
 */
import { createHash } from 'node:crypto';
import { ERROR_CODES, ErrorCode } from '../../lib/errorCodes';
import { escapeHtml } from '../../lib/html';

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

export { escapeHtml };

/** Escaped text where `code` spans become <code>. */
function text(s: string | undefined): string {
  if (!s) return '';
  return escapeHtml(s).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`;
}

const refName = (ref: string) => ref.split('/').pop()!;
const schemaAnchor = (name: string) => `schema-${name}`;

/** A one-line description of a schema: type, enum, format, bounds, default. */
export function describeSchema(schema: Json | undefined): string {
  if (!schema || Object.keys(schema).length === 0) return 'any';
  if (schema.$ref) {
    const name = refName(schema.$ref);
    return `<a href="#${schemaAnchor(name)}">${escapeHtml(name)}</a>`;
  }
  if ('const' in schema) return `<code>${escapeHtml(JSON.stringify(schema.const))}</code>`;
  for (const k of ['oneOf', 'anyOf'] as const) {
    if (Array.isArray(schema[k])) return schema[k].map((s: Json) => describeSchema(s)).join(' or ');
  }
  if (schema.not && Object.keys(schema.not).length === 0) return 'not accepted here';
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  let out = types
    .map((t: string) => {
      if (t === 'array') return `array of ${describeSchema(schema.items)}`;
      if (t === 'object' && schema.properties) return 'object (below)';
      return escapeHtml(t);
    })
    .join(' or ');
  if (!out) out = 'any';
  const notes: string[] = [];
  if (Array.isArray(schema.enum)) notes.push(`one of ${schema.enum.map((v: unknown) => `<code>${escapeHtml(JSON.stringify(v))}</code>`).join(', ')}`);
  if (schema.format) notes.push(`format ${escapeHtml(schema.format)}`);
  if (schema.pattern) notes.push(`pattern <code>${escapeHtml(schema.pattern)}</code>`);
  if (schema.minLength !== undefined) notes.push(`at least ${schema.minLength} characters`);
  if (schema.maxLength !== undefined) notes.push(`at most ${schema.maxLength} characters`);
  if (schema.minimum !== undefined) notes.push(`minimum ${schema.minimum}`);
  if (schema.maximum !== undefined) notes.push(`maximum ${schema.maximum}`);
  if (schema.minItems !== undefined) notes.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) notes.push(`at most ${schema.maxItems} items`);
  if (schema.default !== undefined) notes.push(`default <code>${escapeHtml(JSON.stringify(schema.default))}</code>`);
  return notes.length ? `${out}; ${notes.join('; ')}` : out;
}

/** Rows of a property table, nested objects and arrays of objects flattened as `a[][b]`. */
function propertyRows(schema: Json, prefix = ''): string[] {
  const props: Record<string, Json> = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const rows: string[] = [];
  for (const [name, prop] of Object.entries(props)) {
    const full = prefix ? `${prefix}[${name}]` : name;
    rows.push(
      `<tr><td><code>${escapeHtml(full)}</code></td><td>${describeSchema(prop)}</td><td>${required.includes(name) ? 'yes' : ''}</td><td>${text(prop.description)}</td></tr>`,
    );
    if (prop.properties) rows.push(...propertyRows(prop, full));
    if (prop.items?.properties) rows.push(...propertyRows(prop.items, `${full}[]`));
  }
  return rows;
}

function propertyTable(schema: Json): string {
  const rows = propertyRows(schema);
  if (rows.length === 0) return `<p>${describeSchema(schema)}</p>`;
  return `<table><thead><tr><th>Field</th><th>Type</th><th>Required</th><th>Notes</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function resolve(doc: Json, obj: Json): Json {
  if (obj?.$ref) {
    const [, , kind, name] = obj.$ref.split('/');
    return doc.components[kind][name];
  }
  return obj;
}

function operationHtml(doc: Json, path: string, method: string, op: Json): string {
  const anchor = `op-${op.operationId}`;
  const parts: string[] = [];
  parts.push(`<div class="op" id="${anchor}">`);
  parts.push(`<h4><span class="method ${method}">${method.toUpperCase()}</span> <code>/v1${escapeHtml(path)}</code></h4>`);
  parts.push(`<p>${text(op.summary)}${op.description ? `. ${text(op.description)}` : ''}</p>`);
  parts.push(`<p class="muted">${Array.isArray(op.security) && op.security.length === 0 ? 'No token needed.' : 'Needs a token.'} Operation id <code>${escapeHtml(op.operationId)}</code>.</p>`);
  const params: Json[] = (op.parameters ?? []).map((p: Json) => resolve(doc, p));
  if (params.length) {
    parts.push('<table><thead><tr><th>Parameter</th><th>In</th><th>Type</th><th>Required</th><th>Notes</th></tr></thead><tbody>');
    for (const p of params) {
      parts.push(
        `<tr><td><code>${escapeHtml(p.name)}</code></td><td>${escapeHtml(p.in)}</td><td>${describeSchema(p.schema)}</td><td>${p.required ? 'yes' : ''}</td><td>${text(p.description)}</td></tr>`,
      );
    }
    parts.push('</tbody></table>');
  }
  if (op.requestBody) {
    const schema = op.requestBody.content['application/json'].schema;
    parts.push(`<p><strong>Body</strong> (JSON${op.requestBody.required ? '' : ', optional'}):</p>`);
    parts.push(propertyTable(schema));
  }
  parts.push('<table><thead><tr><th>Status</th><th>Answer</th></tr></thead><tbody>');
  for (const [status, raw] of Object.entries(op.responses as Record<string, Json>)) {
    const r = resolve(doc, raw);
    const schema = r.content?.['application/json']?.schema;
    const shape = schema ? (schema.properties ? describeList(schema) : describeSchema(schema)) : 'no body';
    parts.push(`<tr><td>${escapeHtml(status)}</td><td>${text(r.description)}: ${shape}</td></tr>`);
  }
  parts.push('</tbody></table></div>');
  return parts.join('\n');
}

/** `{customers: [Customer], pagination}` for list answers. */
function describeList(schema: Json): string {
  return (
    '<code>{</code>' +
    Object.entries(schema.properties as Record<string, Json>)
      .map(([k, v]) => `<code>${escapeHtml(k)}</code>: ${describeSchema(v)}`)
      .join(', ') +
    '<code>}</code>'
  );
}

export function renderReference(doc: Json): string {
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const [method, op] of Object.entries(item)) {
      const tag = op.tags?.[0] ?? 'Other';
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)!.push(operationHtml(doc, path, method, op));
    }
  }
  const tags: Json[] = doc.tags ?? [];
  const schemas = doc.components.schemas as Record<string, Json>;
  const body = [
    '<header>',
    `<h1>${escapeHtml(doc.info.title)} <small class="muted">v${escapeHtml(doc.info.version)}</small></h1>`,
    `<p>${text(doc.info.description)}</p>`,
    '<p>Machine-readable: <a href="/v1/openapi.json">/v1/openapi.json</a> (OpenAPI 3.1). Errors: <a href="/docs/errors">/docs/errors</a>.</p>',
    '<h2>Authentication</h2>',
    ...Object.entries(doc.components.securitySchemes as Record<string, Json>).map(([name, s]) => `<p><strong>${escapeHtml(name)}</strong>: ${text(s.description)}</p>`),
    '<nav><h2>Contents</h2><ul>',
    ...tags.map((t) => `<li><a href="#tag-${slug(t.name)}">${escapeHtml(t.name)}</a></li>`),
    '<li><a href="#schemas">Schemas</a></li></ul></nav>',
    '</header>',
    '<main>',
    ...tags.map((t) => [`<h2 id="tag-${slug(t.name)}">${escapeHtml(t.name)}</h2>`, `<p>${text(t.description)}</p>`, ...(byTag.get(t.name) ?? [])].join('\n')),
    '<h2 id="schemas">Schemas</h2>',
    ...Object.entries(schemas).map(
      ([name, s]) => `<h3 id="${schemaAnchor(name)}">${escapeHtml(name)}</h3>${s.description ? `<p>${text(s.description)}</p>` : ''}${propertyTable(s)}`,
    ),
    '</main>',
  ].join('\n');
  return page(`${doc.info.title}: reference`, body);
}

function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

export function renderErrors(): string {
  const codes = Object.entries(ERROR_CODES) as [ErrorCode, (typeof ERROR_CODES)[ErrorCode]][];
  const body = [
    '<header>',
    '<h1>Errors</h1>',
    '<p>Every error but those of <code>POST /v1/auth</code> has one body:</p>',
    '<pre><code>{"error": {"type": "invalid_request_error", "code": "parameter_invalid", "message": "Email is invalid",\n           "param": "email", "timestamp": "2026-11-22T16:00:00.000Z",\n           "doc_url": "&lt;PUBLIC_URL&gt;/docs/errors#parameter_invalid"},\n "errors": {"email": ["is invalid"]}}</code></pre>',
    '<p><code>code</code> is stable: programs branch on it. <code>message</code> is for people and may change. <code>param</code> names the offending parameter (nested ones like <code>line_items[][price_id]</code>) or is null. ',
    'Validation failures of a model also carry <code>errors</code>, the field-errors map. <code>POST /v1/auth</code> answers its own failures as <code>{"error": "&lt;message&gt;"}</code> ',
    '(401 wrong credentials, 422 <code>otp_attempt_required</code>).</p>',
    '<p>Types: <code>invalid_request_error</code> (fix the request), <code>authentication_error</code> (fix the token), <code>address_error</code> (fix the address), <code>api_error</code> (our side or a dependency: retry).</p>',
    '<nav><ul>',
    ...codes.map(([code]) => `<li><a href="#${code}"><code>${code}</code></a></li>`),
    '</ul></nav>',
    '<p><a href="/docs">API reference</a></p>',
    '</header>',
    '<main>',
    ...codes.map(
      ([code, info]) =>
        `<section class="code" id="${code}"><h2><code>${code}</code></h2><p class="muted">HTTP ${info.statuses.join(', ')} · type <code>${info.type}</code></p><p>${text(info.description)}</p></section>`,
    ),
    '</main>',
  ].join('\n');
  return page('Errors: API reference', body);
}
