import js from "@eslint/js";
import pipedream from "@pipedream/eslint-plugin-pipedream";

/**
 * `npm run lint`: ESLint's recommended rules everywhere, and Pipedream's component rules
 * (@pipedream/eslint-plugin-pipedream) on the app file, the actions and the sources, all as
 * errors. Left out: `default-value-required-for-optional-props`, which Pipedream's own registry
 * does not enable either: an optional filter such as "Online status" has no sensible default.
 */
const node = {
  Buffer: "readonly",
  URL: "readonly",
  clearTimeout: "readonly",
  console: "readonly",
  fetch: "readonly",
  process: "readonly",
  setTimeout: "readonly",
};

const componentRules = Object.fromEntries(
  Object.keys(pipedream.rules)
    .filter((rule) => rule !== "default-value-required-for-optional-props")
    .map((rule) => [`pipedream/${rule}`, "error"]),
);

export default [
  js.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: node,
    },
  },
  {
    files: [
      "*.app.mjs",
      "actions/**/*.mjs",
      "sources/**/*.mjs",
    ],
    plugins: {
      pipedream,
    },
    rules: componentRules,
  },
  {
    ignores: [
      "node_modules/",
    ],
  },
];
