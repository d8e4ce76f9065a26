/**
 * Stand-in for `@aws-sdk/credential-provider-node` inside the Lambda bundles
 * (an esbuild `alias` in infra/constructs/service-function.ts): Lambda gives a
 * function its role's credentials through the environment
 * (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`; AWS's
 * "Defined runtime environment variables",
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime,
 * and docs/deploy.md "Credentials of the functions"), so the
 * default chain's other providers (SSO, INI files, process, web identity,
 * container and instance metadata) and the STS/SSO clients they carry are
 * dead weight in a bundle: about 145 KB and their module evaluation at every
 * cold start.
 *
 * Only the bundles use this module. Everything that runs the TypeScript
 * sources (the local stack, the tests, the operator CLI) keeps the SDK's full
 * default chain.
 */
import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * The SDK clients' `credentialDefaultProvider`: credentials from the
 * environment only. The provider rejects with `CredentialsProviderError` when
 * `AWS_ACCESS_KEY_ID` or `AWS_SECRET_ACCESS_KEY` is missing.
 *
 * @param init - what the client passes to its default provider (its logger is used for debug output).
 */
export const defaultProvider = (init: Parameters<typeof fromEnv>[0] = {}): ReturnType<typeof fromEnv> => fromEnv(init);
