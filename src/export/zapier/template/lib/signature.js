'use strict';

// Stands in for the Standard Webhooks verification every exported app shares
// (src/export/shared/template/standard-webhooks.ts), so this folder type-checks in the
// connector's repository; `npm run export` writes its compiled form here instead.
/** @type {typeof import('../../../shared/template/standard-webhooks.js')} */
module.exports = require('../../../shared/template/standard-webhooks.cjs');
