export * from './paths';
export * from './wbf';
export * from './verifier';
