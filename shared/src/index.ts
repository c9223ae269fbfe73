export * from './constants.ts';
export * from './envelope.ts';
export * from './routes.ts';
export * from './i18n.ts';
export * from './csp.ts';
export * from './auth.ts';
