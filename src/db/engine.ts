/** The two database engines the data layer runs on (the only place their names are declared). */
export type Engine = 'sqlite' | 'postgres';

/**
 * The one of `choices` made for `engine`: how the composition root picks each engine-specific
 * store once, at wiring time. Every engine must be given one (a new engine fails to compile
 * until each store has its implementation), and code above db/ never compares engine names.
 */
export function byEngine<T>(engine: Engine, choices: { readonly [E in Engine]: () => T }): T {
  return choices[engine]();
}
