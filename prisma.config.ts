import { defineConfig } from 'prisma/config';

// Only `prisma generate` uses this file; migrations run through prisma/migrate.ts.
export default defineConfig({ schema: 'prisma/schema.prisma' });
