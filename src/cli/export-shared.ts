import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedSharedFiles, sharedSourceDir } from '../export/shared/generated.js';

/**
 * `npm run export:shared`: regenerates the generated files of src/export/shared/template/ (the
 * manifest types and the compiled Standard Webhooks verification) after a change to the
 * manifest schema or to standard-webhooks.ts. A development command: it needs TypeScript.
 */
for (const [name, text] of generatedSharedFiles()) {
  const file = join(sharedSourceDir, name);
  writeFileSync(file, text);
  console.log(`Wrote ${file}`);
}
