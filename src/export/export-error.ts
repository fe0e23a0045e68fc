/**
 * What an exporter throws for a manifest or base URL its platform cannot express; the export
 * CLI prints its message and exits 1. Each platform's own error class extends it.
 */
export class ExportError extends Error {}
