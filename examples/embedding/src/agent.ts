import { createAgent, defaultPolicies, defineTool, withApprovals } from '@openmanus/core';
import { z } from 'zod';

const orders: Record<string, { readonly total: number; readonly status: string }> = {
  'A-1001': { total: 42, status: 'delivered' },
  'A-1002': { total: 120, status: 'lost in transit' },
};

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'The total (EUR) and delivery status of an order',
  parameters: z.object({ orderId: z.string() }),
  parallelSafe: true,
  execute: ({ orderId }) => {
    const order = orders[orderId];
    return order ? `${orderId}: ${order.total} EUR, ${order.status}` : `No order ${orderId}.`;
  },
});

const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refunds an order, in full or in part',
  parameters: z.object({ orderId: z.string(), amount: z.number().positive() }),
  execute: ({ orderId, amount }) => `Refunded ${amount} EUR on ${orderId}.`,
});

/** The support agent every server mounts: each refund waits for a person's approval. */
export const supportAgent = withApprovals(
  createAgent({
    name: 'support',
    systemPrompt: 'You help customers with their orders. Look orders up before refunding them.',
    tools: [lookupOrder, refundOrder],
    policies: defaultPolicies({ maxSteps: 8 }),
  }),
  ['refund_order'],
);
