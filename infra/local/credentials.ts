/**
 * Credentials the local endpoints accept (s3rver checks signatures against
 * these). In a module of its own: the operator CLI reads them without loading
 * the emulators' packages, so `npx ops` starts fast (bin/ops.mjs).
 */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
