// What `import 'ferry'` (and 'ferry/store', 'ferry/broker') resolves to outside Bun: package.json's
// exports send the "bun" condition to the TypeScript sources and every other runtime here. Plain
// JavaScript on purpose: Node cannot load the .ts sources at all (not from node_modules), so this
// file is the only place a Node user can be told why, in one line instead of a resolution error.
throw new Error(
  `Ferry needs Bun (it uses Bun.hash, bun:ffi, Bun's TCP and TLS sockets and Bun.serve, and ships TypeScript sources): run with bun (https://bun.sh), e.g. \`bun your-service.ts\`; this runtime is Node ${typeof process === 'undefined' ? '' : process.versions.node}`,
);
