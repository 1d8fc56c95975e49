/** Unit tests of the frontend's pure logic (links, prompt parsing, run ordering). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/labextension/src'],
  testMatch: ['**/__tests__/**/*.spec.ts'],
  // marked ships as an ES module only; jest runs CommonJS, so tests load its UMD build.
  moduleNameMapper: {
    '^marked$': '<rootDir>/node_modules/marked/lib/marked.umd.js'
  },
  transform: {
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: {
          strict: true,
          esModuleInterop: true,
          target: 'ES2020',
          module: 'commonjs'
        }
      }
    ]
  }
};
