/** Unit tests of the frontend's pure logic (links, prompt parsing, run ordering). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/labextension/src'],
  testMatch: ['**/__tests__/**/*.spec.ts'],
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
