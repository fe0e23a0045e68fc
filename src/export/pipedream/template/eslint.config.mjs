import js from "@eslint/js";
import pipedream from "@pipedream/eslint-plugin-pipedream";

/**
 * `npm run lint`: ESLint's recommended rules everywhere, and the rules of
 * @pipedream/eslint-plugin-pipedream as errors where Pipedream's own registry applies them: every
 * rule on the actions and sources, the label and description rules on the app file's
 * propDefinitions (an app is not a component: it has no key, name or version). Left out:
 * `default-value-required-for-optional-props`, which the registry does not enable either: an
 * optional filter such as "Online status" has no sensible default.
 */
const node = {
  Buffer: "readonly",
  URL: "readonly",
  URLSearchParams: "readonly",
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
      "actions/**/*.mjs",
      "sources/**/*.mjs",
    ],
    plugins: {
      pipedream,
    },
    rules: componentRules,
  },
  {
    files: [
      "*.app.mjs",
    ],
    plugins: {
      pipedream,
    },
    rules: {
      "pipedream/props-label": "error",
      "pipedream/props-description": "error",
    },
  },
  {
    ignores: [
      "node_modules/",
    ],
  },
];
