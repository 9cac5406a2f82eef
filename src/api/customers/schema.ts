import { compile, s } from '../validation';
import type { CustomerInput } from '../../services/billing/customers';

const nameField = { type: ['string', 'null'], maxLength: 200 };

export const createCustomerBody = compile<CustomerInput & { email: string }>({
  type: 'object',
  required: ['email'],
  properties: { email: s.email, first_name: nameField, last_name: nameField },
});

export const updateCustomerBody = compile<CustomerInput>({
  type: 'object',
  properties: { email: s.email, first_name: nameField, last_name: nameField },
});
