// altcha-lib exposes its classic (v1) API at the `altcha-lib/v1` subpath export, which
// `moduleResolution: node` cannot follow; this points the type checker at the same files.
declare module 'altcha-lib/v1' {
  export * from 'altcha-lib/dist/esm/v1/index';
}
