// Imports a module as seen from this folder (for cold-import timing).
export const load = (specifier) => import(specifier);
