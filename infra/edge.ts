/**
 * Source-based protection in front of the deployed API (docs/deploy.md, "Edge protection").
 *
 * API Gateway's stage throttle (`StageSettings.throttle`, infra/stack.ts) is shared by every tenant and is spent by
 * any request, authenticated or not, before the API's own per-organization limit (docs/limits.md) can count it. An
 * HTTP API cannot take an AWS WAF web ACL, so the published address of the API is a CloudFront distribution whose
 * web ACL limits each source address: anonymous requests (no API key) tightly, all requests of one address above
 * what any organization may send. A blocked request gets the API's own 429 `rate_limited` envelope with
 * `Retry-After`, never reaching API Gateway.
 *
 * A CloudFront web ACL must live in us-east-1: {@link EdgeProtectionStack} holds it (its own stack, deployed by
 * `cdk deploy --all`), and {@link ApiDistribution} in the API's stack references it (a plain cross-stack
 * reference in us-east-1, CDK's cross-region reference elsewhere).
 */
import { Duration, Fn, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { RateLimitedError } from '../lib/errors';
import { API_KEY_PATTERN } from '../lib/ids';
import { ORIGIN_VERIFY_HEADER } from '../lib/http/source-address';

/** Where CloudFront web ACLs must be created (AWS WAF, scope CLOUDFRONT). */
export const EDGE_REGION = 'us-east-1';

/** Per-source limits of the web ACL, in requests per {@link EdgeSettings.windowSeconds} from one IP address. */
export interface EdgeSettings {
  /** The rate-based rules' evaluation window, in seconds (AWS WAF allows 60, 120, 300 or 600). */
  windowSeconds: 60 | 120 | 300 | 600;
  /** Requests without an API key (`Authorization: Bearer cek_…`) from one address per window. */
  anonymousPerAddress: number;
  /** All requests from one address per window: above one organization at its limit, so a tenant is never blocked by it. */
  perAddress: number;
}

/** The body and headers of the edge's 429: the API's `rate_limited` error (docs/errors.md), in its envelope. */
export function edgeRateLimitedResponse(settings: EdgeSettings, limit: number): { body: string; retryAfterSeconds: number } {
  const error = new RateLimitedError({
    policy: 'requests',
    limit,
    windowSeconds: settings.windowSeconds,
    retryAfterSeconds: settings.windowSeconds,
  });
  const body = error.toJSON();
  return {
    body: JSON.stringify({
      data: null,
      error: {
        ...body,
        message: `This address sent more than ${limit} requests in ${settings.windowSeconds} s; retry in ${settings.windowSeconds} s.`,
      },
    }),
    retryAfterSeconds: settings.windowSeconds,
  };
}

/** Options of {@link EdgeProtectionStack}. */
export interface EdgeProtectionStackProps extends StackProps {
  readonly edge: EdgeSettings;
}

/** The web ACL of the API's CloudFront distribution (scope CLOUDFRONT, in {@link EDGE_REGION}). */
export class EdgeProtectionStack extends Stack {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: EdgeProtectionStackProps) {
    super(scope, id, props);
    const { edge } = props;
    const anonymous = edgeRateLimitedResponse(edge, edge.anonymousPerAddress);
    const any = edgeRateLimitedResponse(edge, edge.perAddress);
    const visibility = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      sampledRequestsEnabled: true,
    });
    const block = (customResponseBodyKey: string, retryAfterSeconds: number): wafv2.CfnWebACL.RuleActionProperty => ({
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey,
          responseHeaders: [{ name: 'retry-after', value: String(retryAfterSeconds) }],
        },
      },
    });
    this.webAcl = new wafv2.CfnWebACL(this, 'ApiWebAcl', {
      scope: 'CLOUDFRONT',
      description: 'Per-source rate limits in front of the Campaign Enrichment API - docs/deploy.md Edge protection',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('CampaignEnrichmentApi'),
      customResponseBodies: {
        anonymous: { contentType: 'APPLICATION_JSON', content: anonymous.body },
        perAddress: { contentType: 'APPLICATION_JSON', content: any.body },
      },
      rules: [
        {
          name: 'AnonymousPerAddress',
          priority: 0,
          action: block('anonymous', anonymous.retryAfterSeconds),
          visibilityConfig: visibility('AnonymousPerAddress'),
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              evaluationWindowSec: edge.windowSeconds,
              limit: edge.anonymousPerAddress,
              // Only requests that carry no API key: a key's requests are the organization's, counted by the API.
              scopeDownStatement: {
                notStatement: {
                  statement: {
                    regexMatchStatement: {
                      fieldToMatch: { singleHeader: { Name: 'authorization' } },
                      regexString: `^Bearer ${API_KEY_PATTERN.source.slice(1)}`,
                      textTransformations: [{ priority: 0, type: 'NONE' }],
                    },
                  },
                },
              },
            },
          },
        },
        {
          name: 'PerAddress',
          priority: 1,
          action: block('perAddress', any.retryAfterSeconds),
          visibilityConfig: visibility('PerAddress'),
          statement: { rateBasedStatement: { aggregateKeyType: 'IP', evaluationWindowSec: edge.windowSeconds, limit: edge.perAddress } },
        },
      ],
    });
  }
}

/** Options of {@link ApiDistribution}. */
export interface ApiDistributionProps {
  /** The HTTP API's endpoint, `https://<id>.execute-api.<region>.amazonaws.com`. */
  readonly apiEndpoint: string;
  /** The web ACL of {@link EdgeProtectionStack}. */
  readonly webAclArn: string;
  /** The value CloudFront sends in {@link ORIGIN_VERIFY_HEADER}, by which the API trusts the viewer address header. */
  readonly originSecret: string;
}

/**
 * The API's published address: a CloudFront distribution with caching off that forwards every viewer header except
 * `Host` to the HTTP API, behind the web ACL. It adds {@link ORIGIN_VERIFY_HEADER}, so the API may trust
 * `CloudFront-Viewer-Address` as the caller's address (lib/http/source-address.ts).
 */
export class ApiDistribution extends Construct {
  readonly distribution: cloudfront.Distribution;

  constructor(scope: Construct, id: string, props: ApiDistributionProps) {
    super(scope, id);
    const host = cdkHostOf(props.apiEndpoint);
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Campaign Enrichment API (docs/deploy.md, "Edge protection")',
      webAclId: props.webAclArn,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
      defaultBehavior: {
        origin: new origins.HttpOrigin(host, {
          protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
          // API Gateway answers within its own 30 s integration limit; CloudFront waits a little longer than that.
          readTimeout: Duration.seconds(35),
          customHeaders: { [ORIGIN_VERIFY_HEADER]: props.originSecret },
        }),
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
      },
    });
    for (const finding of [
      {
        id: 'AwsSolutions-CFR1',
        reason: 'A B2B API sold worldwide: no geo restriction; abuse is limited per source address by the web ACL.',
      },
      {
        id: 'AwsSolutions-CFR3',
        reason:
          'API Gateway access logs (ApiAccessLogs) record every request that passes the edge with the caller address; the web ACL samples and counts what it blocks (CloudWatch metrics AnonymousPerAddress, PerAddress).',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          'The distribution uses the default *.cloudfront.net certificate, whose viewer security policy CloudFront fixes (TLSv1); serving the API under a custom domain with its own certificate (docs/deploy.md, "Edge protection") is what allows TLSv1.2_2021.',
      },
    ])
      Validations.of(this.distribution).acknowledge(finding);
  }
}

/** `<id>.execute-api.<region>.amazonaws.com` of an HTTP API endpoint token or string. */
function cdkHostOf(apiEndpoint: string): string {
  return Fn.select(2, Fn.split('/', apiEndpoint));
}
