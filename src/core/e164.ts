/** E.164: a plus sign, a non-zero country digit, 7 to 15 digits in all. */
const E164 = /^\+[1-9]\d{6,14}$/;

export function isE164(value: string): boolean {
  return E164.test(value);
}
