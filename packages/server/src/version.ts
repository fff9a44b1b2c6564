/** This package's version, as the tracer reports it (checked against package.json by a test). */
export const VERSION = '0.1.0';
