/**
 * The cost model of `npm run bench` (issue #13 item 7): dollars from COUNTED
 * usage — DynamoDB request units (ConsumedCapacity of every request), S3
 * requests and bytes (SDK middleware and s3rver's own HTTP server), S3
 * stored bytes (listed) × how long they stay, Step Functions state
 * transitions (the local runner's event log), Lambda requests and
 * GB-seconds (measured CPU-seconds at each function's configured memory),
 * API Gateway requests — times the list prices below.
 *
 * Nothing here is assumed about how the code works: a change that makes
 * fewer calls, writes fewer bytes or deletes objects earlier shows up in the
 * counts, and so in the dollars.
 */

/**
 * AWS list prices, us-east-1, as of 2026-11 (on-demand, no free tier, no
 * savings plans). Sources: the DynamoDB, S3, Step Functions, Lambda and API
 * Gateway pricing pages. Change them here only, with the date.
 */
export const PRICES = {
  asOf: 'us-east-1 list prices as of 2026-11',
  /** DynamoDB on-demand, per read request unit (4 KB strongly consistent read; $0.125 per million). */
  dynamodbRru: 0.125 / 1e6,
  /** DynamoDB on-demand, per write request unit (1 KB write; $0.625 per million). */
  dynamodbWru: 0.625 / 1e6,
  /** DynamoDB Standard table class storage, per GB-month (first 25 GB free not counted). */
  dynamodbGbMonth: 0.25,
  /** S3 Standard PUT, COPY, POST, LIST requests ($0.005 per 1,000). */
  s3PutClass: 0.005 / 1000,
  /** S3 Standard GET, SELECT and all other requests ($0.0004 per 1,000). DELETE is free. */
  s3GetClass: 0.0004 / 1000,
  /** S3 Standard storage, per GB-month (first 50 TB). */
  s3GbMonth: 0.023,
  /** Data transfer out of AWS to the internet, per GB (first 10 TB/month). */
  transferOutGb: 0.09,
  /** Step Functions Standard, per state transition ($0.025 per 1,000). */
  stepFunctionsTransition: 0.025 / 1000,
  /** Lambda requests ($0.20 per million). */
  lambdaRequest: 0.2 / 1e6,
  /** Lambda duration on arm64 (the stack's architecture), per GB-second (first 6 billion GB-s/month). */
  lambdaGbSecondArm: 0.0000133334,
  /** API Gateway HTTP API requests ($1.00 per million, first 300 million; each 512 KB counts as one). */
  httpApiRequest: 1.0 / 1e6,
} as const;

/** Memory (MB) at which a Lambda function has one full vCPU; the share scales linearly below it. */
export const MB_PER_VCPU = 1769;

/** vCPU share of a function with `memoryMb` (capped at 1: the handler's JavaScript runs on one thread). */
export const vcpuShare = (memoryMb: number) => Math.min(1, memoryMb / MB_PER_VCPU);

/**
 * Seconds a CPU-bound invocation takes on Lambda: measured CPU-seconds
 * divided by the vCPU share of the configured memory. Time spent waiting on
 * DynamoDB or S3 is not in it (locally those waits are DynamoDB Local's,
 * not AWS's).
 */
export const lambdaSeconds = (cpuSeconds: number, memoryMb: number) => cpuSeconds / vcpuShare(memoryMb);

/** One Lambda function's invocations in a scenario. */
export interface LambdaUse {
  functionId: string;
  memoryMb: number;
  invocations: number;
  /** Measured CPU-seconds of all of them (this process or a child process). */
  cpuSeconds: number;
}

/** Counted usage of one scenario. */
export interface Usage {
  /** `storedByteMonths`: bytes kept in the table × months (the account history, kept up to 3,650 days; item overhead included). */
  dynamodb: { rru: number; wru: number; storedByteMonths?: number };
  s3: { putClass: number; getClass: number; storedByteMonths: number; transferOutBytes: number };
  stepFunctions: { transitions: number };
  lambda: LambdaUse[];
  apiGateway: { requests: number };
}

/** One line of the bill. */
export interface CostLine {
  item: string;
  quantity: number;
  unit: string;
  dollars: number;
}

const GB = 1e9;

/** GB-seconds of a function's invocations: CPU-bound seconds at its memory, at least 1 ms (Lambda's billing step) per invocation. */
export function gbSeconds(use: LambdaUse): number {
  const seconds = Math.max(lambdaSeconds(use.cpuSeconds, use.memoryMb), use.invocations * 0.001);
  return seconds * (use.memoryMb / 1024);
}

/** The bill of a scenario, line by line, in the order of the price table. */
export function costLines(usage: Usage): CostLine[] {
  const lambdaGbS = usage.lambda.reduce((sum, use) => sum + gbSeconds(use), 0);
  const lambdaRequests = usage.lambda.reduce((sum, use) => sum + use.invocations, 0);
  return [
    { item: 'DynamoDB read request units', quantity: usage.dynamodb.rru, unit: 'RRU', dollars: usage.dynamodb.rru * PRICES.dynamodbRru },
    { item: 'DynamoDB write request units', quantity: usage.dynamodb.wru, unit: 'WRU', dollars: usage.dynamodb.wru * PRICES.dynamodbWru },
    {
      item: 'DynamoDB storage',
      quantity: (usage.dynamodb.storedByteMonths ?? 0) / GB,
      unit: 'GB-months',
      dollars: ((usage.dynamodb.storedByteMonths ?? 0) / GB) * PRICES.dynamodbGbMonth,
    },
    {
      item: 'S3 PUT/COPY/POST/LIST requests',
      quantity: usage.s3.putClass,
      unit: 'requests',
      dollars: usage.s3.putClass * PRICES.s3PutClass,
    },
    { item: 'S3 GET/HEAD requests', quantity: usage.s3.getClass, unit: 'requests', dollars: usage.s3.getClass * PRICES.s3GetClass },
    {
      item: 'S3 storage',
      quantity: usage.s3.storedByteMonths / GB,
      unit: 'GB-months',
      dollars: (usage.s3.storedByteMonths / GB) * PRICES.s3GbMonth,
    },
    {
      item: 'data transfer out (download)',
      quantity: usage.s3.transferOutBytes / GB,
      unit: 'GB',
      dollars: (usage.s3.transferOutBytes / GB) * PRICES.transferOutGb,
    },
    {
      item: 'Step Functions state transitions',
      quantity: usage.stepFunctions.transitions,
      unit: 'transitions',
      dollars: usage.stepFunctions.transitions * PRICES.stepFunctionsTransition,
    },
    { item: 'Lambda requests', quantity: lambdaRequests, unit: 'requests', dollars: lambdaRequests * PRICES.lambdaRequest },
    { item: 'Lambda duration (arm64)', quantity: lambdaGbS, unit: 'GB-s', dollars: lambdaGbS * PRICES.lambdaGbSecondArm },
    {
      item: 'API Gateway HTTP API requests',
      quantity: usage.apiGateway.requests,
      unit: 'requests',
      dollars: usage.apiGateway.requests * PRICES.httpApiRequest,
    },
  ];
}

/** Total of the lines. */
export const totalOf = (lines: readonly CostLine[]) => lines.reduce((sum, line) => sum + line.dollars, 0);

/** Every line multiplied by `factor` (e.g. 1,000 / N for "per 1,000 accounts"). */
export const scaleLines = (lines: readonly CostLine[], factor: number): CostLine[] =>
  lines.map((line) => ({ ...line, quantity: line.quantity * factor, dollars: line.dollars * factor }));

/** `$0.000123` with enough digits for sub-cent figures. */
export const dollars = (value: number) => `$${value.toPrecision(3)}`;

/** A markdown table of the lines with their share of the total. */
export function costTable(lines: readonly CostLine[]): string[] {
  const total = totalOf(lines);
  const rows = ['| line item | quantity | dollars | share |', '|---|---:|---:|---:|'];
  for (const line of lines) {
    const quantity =
      line.quantity >= 100 ? Math.round(line.quantity).toLocaleString('en-US') : Number(line.quantity.toPrecision(3)).toString();
    rows.push(
      `| ${line.item} | ${quantity} ${line.unit} | ${dollars(line.dollars)} | ${total > 0 ? Math.round((line.dollars / total) * 100) : 0} % |`,
    );
  }
  rows.push(`| **total** | | **${dollars(total)}** | |`);
  return rows;
}
