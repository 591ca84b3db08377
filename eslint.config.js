// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'data/', 'web/dist/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // The web page renders hostile payloads: data goes into the DOM as text only.
    files: ['web/src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        ...['innerHTML', 'outerHTML', 'insertAdjacentHTML', 'createContextualFragment', 'srcdoc'].map((property) => ({
          property,
          message: 'Build DOM nodes with textContent (web/src/dom.ts); never parse data as HTML.',
        })),
        { object: 'document', property: 'write', message: 'Never write HTML into the page.' },
      ],
      'no-restricted-globals': ['error', { name: 'DOMParser', message: 'Never parse data as HTML.' }],
    },
  },
);
