// The postgres project runs the storage suites against PostgreSQL (see test/helpers/engine.ts).
process.env.TEST_ENGINE = 'postgres';
