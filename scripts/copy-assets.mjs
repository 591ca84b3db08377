// tsc compiles TypeScript only: copy the SQL migrations beside the compiled store.
import { cpSync } from 'node:fs';

cpSync('src/store/sqlite/migrations', 'dist/src/store/sqlite/migrations', { recursive: true });
