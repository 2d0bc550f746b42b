/**
 * A response body already written as JSON text (a list page whose items SQLite wrote): the
 * HTTP layer sends it as it is instead of serialising an object.
 */
export class JsonText {
  constructor(readonly text: string) {}
}
