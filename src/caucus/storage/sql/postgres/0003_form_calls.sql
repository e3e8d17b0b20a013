-- Issue 31: an approval form carries the tool call it is about (its canonical text is what the
-- operator reads and what the approve option's digest covers), and a canceled form is recorded
-- on the ledger too, so the unrecorded index covers both settled states.
ALTER TABLE forms ADD COLUMN tool_call TEXT;
DROP INDEX forms_unrecorded;
CREATE INDEX forms_unrecorded ON forms (updated_at)
    WHERE state IN ('answered', 'canceled') AND decision_hash IS NULL;
