// tsc compiles TypeScript only: copy the SQL migrations beside the compiled store.
import { cpSync } from 'node:fs';

for (const backend of ['sqlite', 'postgres']) {
  cpSync(`src/store/${backend}/migrations`, `dist/src/store/${backend}/migrations`, { recursive: true });
}
