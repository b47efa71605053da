#!/usr/bin/env node
// Runs the TypeScript sources directly: cmi ships no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
