import { compile, s } from '../validation';

export const createProductBody = compile<{ name: string }>({ type: 'object', required: ['name'], properties: { name: s.name } });
export const updateProductBody = compile<{ name?: string }>({ type: 'object', properties: { name: s.name } });
