// Stands in for the manifest types every exported app shares (generated from the manifest
// schema), so this folder type-checks in the connector's repository; `npm run export` writes
// that file here instead.
export * from '../../../../shared/template/manifest';
