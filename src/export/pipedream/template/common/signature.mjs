// Stands in for the Standard Webhooks verification every exported app shares
// (src/export/shared/template/standard-webhooks.ts); `npm run export` writes its compiled form here instead.
export * from "../../../shared/template/standard-webhooks.mjs";
