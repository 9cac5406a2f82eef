/** @jsxImportSource preact */
/**
 * Server-rendered HTML: JSX through preact-render-to-string, which escapes every text child and
 * attribute value, so no page escapes by hand (docs/adr/0111-html-rendered-with-jsx.md).
 * Raw HTML goes in only through `dangerouslySetInnerHTML`, each use commented with why.
 */
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/** A whole page: the doctype, then the `<html>` element. */
export function renderDocument(page: VNode): string {
  return `<!doctype html>\n${renderToString(page)}\n`;
}

/**
 * JSON for a `<script type="application/json">` block's text: `<` (and U+2028/9) as `\uXXXX`, so
 * the data can neither close the element nor open a comment. Goes in through
 * dangerouslySetInnerHTML, since escaping it as text would change the JSON.
 */
export function jsonForScript(data: unknown): string {
  return JSON.stringify(data).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** A `<script type="application/json">` block (data, not code; the CSP runs no inline script). */
export function JsonBlock({ id, data }: { id: string; data: unknown }) {
  // Raw text on purpose: JSON escaped by jsonForScript, so it cannot close the element.
  return <script type="application/json" id={id} dangerouslySetInnerHTML={{ __html: jsonForScript(data) }} />;
}

/** A constant stylesheet inline (allowed by the CSP by its hash, so it must go out byte for byte). */
export function InlineStyle({ css }: { css: string }) {
  // Raw text on purpose: a constant of ours, not data; escaping `"` would change its hash.
  return <style dangerouslySetInnerHTML={{ __html: css }} />;
}

/** The head's first tags on every page: UTF-8, a phone's width, and no referrer sent from it. */
export function PageMeta() {
  return (
    <>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
    </>
  );
}
