

aPlaceholder*
dtype0

bPlaceholder*
dtype0

sumAddV2ab*
T0"