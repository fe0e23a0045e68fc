// Stands in for the Standard Webhooks verification every exported app shares, so this folder
// type-checks in the connector's repository; `npm run export` writes that file here instead.
export * from '../../../../shared/template/standard-webhooks';
