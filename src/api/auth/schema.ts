import { compile } from '../validation';

export const authBody = compile<{ email: string; password: string; otp_attempt?: string }>({
  type: 'object',
  required: ['email', 'password'],
  properties: {
    email: { type: 'string', maxLength: 254 },
    password: { type: 'string', maxLength: 1024 },
    otp_attempt: { type: 'string', maxLength: 10 },
  },
});
