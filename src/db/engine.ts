/** The two database engines the data layer runs on (the only place their names are declared). */
export type Engine = 'sqlite' | 'postgres';
