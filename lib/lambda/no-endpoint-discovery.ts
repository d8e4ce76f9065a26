/**
 * Stand-in for `@aws-sdk/middleware-endpoint-discovery` inside the Lambda
 * bundles (an esbuild `alias` in infra/constructs/service-function.ts).
 *
 * The DynamoDB client resolves an endpoint-discovery configuration at
 * construction, including an endpoint cache (`@aws-sdk/endpoint-cache` and
 * mnemonist's LRU cache, about 9 KB of minified code), but none of its
 * commands adds the discovery middleware (client-dynamodb 3.1162: no command
 * imports `getEndpointDiscoveryPlugin`), so the cache is never read. This
 * module resolves the same configuration without the cache. Should a later
 * SDK version import anything else from the package, the bundle build fails
 * (esbuild: no matching export) instead of silently changing behaviour.
 *
 * Only the bundles use it; the sources (local stack, tests) keep the package.
 */

const ENV_ENDPOINT_DISCOVERY = ['AWS_ENABLE_ENDPOINT_DISCOVERY', 'AWS_ENDPOINT_DISCOVERY_ENABLED'];
const CONFIG_ENDPOINT_DISCOVERY = 'endpoint_discovery_enabled';
const isFalsy = (value: string | undefined) => value === 'false' || value === '0';

/** As the package's: whether discovery is enabled, from the environment or the shared config file (unset by default). */
export const NODE_ENDPOINT_DISCOVERY_CONFIG_OPTIONS = {
  environmentVariableSelector: (env: Record<string, string | undefined>): boolean | undefined => {
    for (const key of ENV_ENDPOINT_DISCOVERY) {
      if (key in env) {
        const value = env[key];
        if (value === '') throw new Error(`Environment variable ${key} can't be empty of undefined, got "${value}"`);
        return !isFalsy(value);
      }
    }
    return undefined;
  },
  configFileSelector: (profile: Record<string, string | undefined>): boolean | undefined => {
    if (CONFIG_ENDPOINT_DISCOVERY in profile) {
      const value = profile[CONFIG_ENDPOINT_DISCOVERY];
      if (value === undefined) throw new Error(`Shared config entry ${CONFIG_ENDPOINT_DISCOVERY} can't be undefined, got "${value}"`);
      return !isFalsy(value);
    }
    return undefined;
  },
  default: undefined,
};

/** As the package's, without the endpoint cache no command reads. */
export const resolveEndpointDiscoveryConfig = <
  T extends { endpointDiscoveryEnabled?: boolean; endpointDiscoveryEnabledProvider?: () => Promise<boolean | undefined> },
>(
  input: T,
  { endpointDiscoveryCommandCtor }: { endpointDiscoveryCommandCtor: unknown },
) =>
  Object.assign(input, {
    endpointDiscoveryCommandCtor,
    endpointDiscoveryEnabled:
      input.endpointDiscoveryEnabled !== undefined
        ? () => Promise.resolve(input.endpointDiscoveryEnabled)
        : input.endpointDiscoveryEnabledProvider,
    isClientEndpointDiscoveryEnabled: input.endpointDiscoveryEnabled !== undefined,
  });
