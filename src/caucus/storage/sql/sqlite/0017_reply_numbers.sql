-- Issue 50: a reply names the message it answers by the number a model sees ("re #22 from
-- alice"): the number and the sender of the message replied to are kept with the reply.
ALTER TABLE messages ADD COLUMN reply_seq INTEGER;
ALTER TABLE messages ADD COLUMN reply_sender TEXT;

UPDATE messages SET
    reply_seq = (SELECT p.seq FROM messages p WHERE p.id = messages.reply_to),
    reply_sender = (SELECT p.sender FROM messages p WHERE p.id = messages.reply_to)
WHERE reply_to IS NOT NULL;
