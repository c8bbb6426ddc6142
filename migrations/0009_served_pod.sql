-- One owner for the served Pod (issue 22). Every writer saves the finished object it drew; readers
-- never draw one.
--
-- pods.spec_json held the manifest a third time in each row (record_json and object_json hold it
-- too): object_json's spec is the one copy now, and record_json leaves the manifest out.
ALTER TABLE pods DROP COLUMN spec_json;

-- The Pod as served right after the API write that stored the row (create, update, delete), drawn
-- by that write: what a read serves while it is newer than the loop's checkpoint of the pod
-- (pods.object_json, whose revision then passes resource_version). NULL for rows written before.
ALTER TABLE api_pods ADD COLUMN served_json TEXT;
