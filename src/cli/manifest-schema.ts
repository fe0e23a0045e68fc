import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestJsonSchemaText } from '../manifest/json-schema.js';
import { projectRoot } from '../paths.js';

/** `npm run manifest:schema`: regenerates manifests/connector.schema.json from the zod schema. */
const file = join(projectRoot, 'manifests', 'connector.schema.json');
writeFileSync(file, manifestJsonSchemaText());
console.log(`Wrote ${file}`);
