export const formatModels = () => ''; export const judgeModels = () => [];
