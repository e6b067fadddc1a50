// The single-file build's stand-in for web/engine/threaded.js: one file cannot start workers of
// its own, so init({ threads }) there always gives the single-thread engine (lens.threads = 1).
export function startThreaded(build, requested, { single }) {
  return single();
}
